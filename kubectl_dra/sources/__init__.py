"""Where a Store's objects come from: the built-in demo, files, or a live cluster (see base.Source).

Nothing is imported here: `--help` and TAB load kubectl_dra.sources.base for the options, and must
not pay for the file reader (YAML, the allocator) or the cluster client."""
