import sys

from mafiabot.tools.cli import main

sys.exit(main())
