"""One module per `kubectl dra` command; cli.py registers them lazily by name."""
