"""A small local Discord (REST + gateway) for tests and the demo."""
