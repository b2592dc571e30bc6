"""The commands of the command line, one module each: its options (whose docstring is its help)
and its handler, declared as a `Command` that irpool.cli lists."""
