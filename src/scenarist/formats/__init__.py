"""Files and wire formats, one codec each: the run log (JSONL), scenario files (YAML/JSON)
and their JSON Schemas, and the Veval wire format. Built on the model; read by the store,
the server, the CLI and the pytest plugin."""
