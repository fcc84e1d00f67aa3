"""Input and output limits, defined once; `model.text.inputs.prepare_source` and `model.decoding.greedy` enforce them.

The app and the README show these numbers; nothing else hard-codes them.
"""

MAX_INPUT_CHARS = 5000  # longer text is refused before tokenizing (a clear message, no work done)
MAX_SOURCE_TOKENS = 100  # subword tokens of the source; longer sources are cut, with a notice
MAX_TARGET_TOKENS = 120  # generated tokens (EOS included) before greedy decoding stops
TOP_K = 10  # next-token candidates kept per step in a trace
