"""Pictures the bot posts: the table card during a game and the protocol sheet at its end.

Drawn with Pillow into PNG bytes, the same bytes for the same input. The card reads only
``engine.public.PublicTable`` and the seats' names, so it cannot show a card or a night choice.
"""
