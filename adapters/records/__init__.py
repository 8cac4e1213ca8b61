"""Per-source normalisers: one module per raw schema, each turning raw rows into `McqDoc`."""
