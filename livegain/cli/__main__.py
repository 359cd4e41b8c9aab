"""``python -m livegain.cli``: the ``livegain`` command."""

from livegain.cli import console

console()
