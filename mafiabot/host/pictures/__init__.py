"""Pictures the bot posts: the table card during a game, the protocol sheet at its end, the charts.

The card and the sheet are drawn with Pillow, the charts with matplotlib, into PNG bytes: the same
bytes for the same input. The card reads only ``engine.public.PublicTable`` and the seats' names, so
it cannot show a card or a night choice.
"""
