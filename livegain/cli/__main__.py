import sys

from livegain.cli import main

sys.exit(main())
