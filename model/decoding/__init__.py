"""Decoding and tracing: greedy decoding with a KV cache and `translate` -> TranslationTrace (greedy.py),
the trace itself (trace.py) and its teacher-forced assembly (teacher_forced.py), beam search (6.1),
heads switched off (ablation.py), and the translate command line (cli.py).
"""
