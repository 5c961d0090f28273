"""The Discord side: the bot, the presenter, the member editor and the text in three languages."""
