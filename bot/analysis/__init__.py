"""Pure analysis: repository text in, findings out. Reads files only through a `Tree`."""
