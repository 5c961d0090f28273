"""Images the bot posts: drawn from plain data into PNG bytes, off the event loop."""
