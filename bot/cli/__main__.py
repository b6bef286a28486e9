"""`python -m bot.cli`."""

from bot.cli import main

raise SystemExit(main())
