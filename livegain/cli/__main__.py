from livegain.cli import console

console()
