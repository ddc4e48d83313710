"""Who sits at the table, and the serving stacks behind the models.

`agent` (the interface every player implements, and how agents are made from specs), `tactics`
(scripted negotiators), `llm` (the language-model agent), `arms` (the catalogue), `adapters`
(adapter downloads), `backends` (vLLM or any OpenAI-compatible server, transformers + peft in
process, canned replies), `serve` (the vLLM command), `stub_server` and `tiny` (a canned server
and tiny random models for offline tests). Built on the engine only.
"""
