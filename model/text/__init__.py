"""Text in and out: the shared subword tokenizer (3.4), encoder inputs, the input/output limits and the
guard rails on what is typed.
"""
