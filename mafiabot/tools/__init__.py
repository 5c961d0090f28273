"""Tools around the bot: the command line, the configuration file, the checks, the demo and the simulator."""
