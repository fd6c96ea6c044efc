from dreamcontext_council.cli import main

main()
