"""mafiabot: the application around the engine (config, CLI, runtime, store, i18n, emulator)."""
