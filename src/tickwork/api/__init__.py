"""The HTTP API: Powertools' event handler routes over the use cases, with OpenAPI docs."""
