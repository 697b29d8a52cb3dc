"""Language models as UNO players: an OpenAI-compatible chat endpoint, or a Python function
from chat messages to text, seated at the table like any other agent.

* :mod:`unolab.agents.llm.spec`: the agent spec file (``llm:`` with the model, its address,
  the prompt's options), checked with bounds;
* :mod:`unolab.agents.llm.client`: the chat-completions client (timeouts, retries with
  backoff, one-line errors that never show the key);
* :mod:`unolab.agents.llm.agent`: :class:`~unolab.agents.llm.agent.LLMAgent`, which turns
  each decision into a prompt (:mod:`uno_env.text`), asks the model and parses its answer;
* :mod:`unolab.agents.llm.records`: a JSON line per decision, and the cache that answers
  recorded prompts again without asking the model.

A spec file is accepted wherever an agent is (``resolve_policy("my_model.yaml")``,
``uno-lab tournament --participants mixbot my_model.yaml``).
"""
