"""Size of one sentence's trace JSON: the full TranslationTrace.to_json() against the lean wire form.

python3 scripts/trace_size.py --checkpoint checkpoints/de-en-small "Zwei Hunde spielen im Schnee."
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from model import load_checkpoint  # noqa: E402
from model.decoding.greedy import translate  # noqa: E402
from model.checkpoints.paths import DEFAULT_CHECKPOINT  # noqa: E402
from serving import wire  # noqa: E402

DEFAULT_TEXT = "Ein Mann fährt mit dem Fahrrad die Straße entlang, während zwei Hunde spielen."


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("text", nargs="?", default=DEFAULT_TEXT)
    parser.add_argument("--direction", default="de-en")
    parser.add_argument("--checkpoint", default=str(DEFAULT_CHECKPOINT))
    args = parser.parse_args(argv)
    checkpoint = load_checkpoint(args.checkpoint)
    trace = translate(checkpoint.model, checkpoint.tokenizer, args.text, args.direction)
    sizes = {
        "source_tokens": len(trace.source_tokens),
        "steps": trace.num_steps,
        "full_bytes": len(trace.to_json().encode()),
        "lean_bytes": len(wire.lean_trace_json(trace).encode()),
    }
    print(
        f"{sizes['source_tokens']} source tokens, {sizes['steps']} steps: full {sizes['full_bytes']:,} bytes, "
        f"lean {sizes['lean_bytes']:,} bytes ({sizes['lean_bytes'] / sizes['full_bytes']:.0%})"
    )
    return sizes


if __name__ == "__main__":
    main()
