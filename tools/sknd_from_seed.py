"""Write the NNEF 2.0 standard library (.sknd modules) from the seed's §4 text.

    python3 tools/sknd_from_seed.py [../shared/seeds/004_f90548b79c5f119e.txt]

The seed is a text extraction of the draft's PDF/HTML and damaged §4: lost '}'
lines, wrapped lines, HTML residue ('</pre>', '&lt;'), back-ticks printed as
quotes, '..' printed as '...'. This script repairs only such damage - the
mechanical rules below plus the MANUAL table, each with its reason - and logs
every single repair (seed line, rule, before -> after) into
py/webnn_core/nnef2/stdlib/REPAIRS.md. Operators whose definition the seed does
not print (only their title survives) are not invented here: they live in
py/webnn_core/nnef2/stdlib/<module>_extra.sknd, written by hand and marked so.
"""
from __future__ import annotations

import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "py", "webnn_core", "nnef2", "stdlib")
DEFAULT_SEED = os.path.join(ROOT, "..", "shared", "seeds", "004_f90548b79c5f119e.txt")

MODULES = (("4.1.", "layout"), ("4.2.", "math"), ("4.3.", "linalg"), ("4.4.", "nn"), ("4.5.", "image"),
           ("4.6.", "quant"), ("4.7.", "algo"))
BUILTINS = ("abs", "sign", "sqrt", "exp", "log", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh",
            "tanh", "asinh", "acosh", "atanh", "ceil", "floor", "round", "frac", "erf")

# seed line -> (expected damaged text, repaired text, why). Found by parsing each
# operator and reading the spot; every entry is damage of the kinds listed above.
MANUAL = {}


def manual(line, before, after, why):
    MANUAL[line] = (before, after, why)


manual(2062, "        output[zeros", "    @lower {\n        output[zeros", "lost '@lower {' header line")
manual(1912, "+ ...)", "+ ..)", "'..' printed as '...': the assert needs the sum of the pack, not its running sums")
manual(2124, "+ ...)", "+ ..)", "'..' printed as '...': the assert needs the sum of the pack, not its running sums")
manual(1918, "( shape * ..)", "(_shape * ..)", "leading '_' printed as a space (the volume of '_shape', -1 resolved)")
manual(4348, "fc * q", "fc * g", "'g' read as 'q' ('g' is the group count defined above)")
manual(4962, "12_norm", "l2_norm", "'l' read as '1'")
manual(2088, "U = Z", "u = z", "identifiers capitalised by the extraction (the next lines use 'u' and 'z')")
manual(2337, "| | ...", "|| ..", "'||' split into '| |', and '..' printed as '...' (an any-fold, not running ors)")
manual(4628, "{padding aligns}\", padding align;", "{padding_aligns}\", padding_align;",
       "'_' printed as a space inside a formatted-string expression and in an argument")
manual(4176, "}", "", "stray '}' at a page break (the @input block goes on with 'C' on the next page)")
manual(4813, "x[i..]))", "x[i..])) :", "lost ':' of the select at a line break")
manual(3683, "'b')\",", "'b')\",\n            'val.shape': x.shape, 'min.shape': a.shape, 'max.shape': b.shape,\n"
       "            val_align, min_align, max_align;",
       "the rest of 'clamp' was lost at a page break: the last assert's arguments restored as in the two asserts "
       "above it; its @lower block is not restored (clamp runs as the WebNN clamp intrinsic)")
manual(3792, "input[i..],", "input[i..],\n            i < s;",
       "lost loop-bound line (restored as in min_reduce/max_reduce)")
manual(4722, "padding_aligns:", "padding_aligns:\n            \"'padding_align' must be one of {padding_aligns}\", "
       "padding_align;", "lost message line at a page break (restored as in the pools above)")
for _line in (4372, 4466):
    manual(_line, "offset|...gi", "offset|.., gi", "lost ',' between two index items ('...' for '..')")
manual(4468, "offset|...qi", "offset|.., gi", "lost ',' between two index items; 'g' read as 'q' (as in conv)")
manual(4635, "cnt = if ignore_border then", "# (lost in the seed: the rest of this @compose)",
       "avg_pool's @compose is cut off at a page break; the partial statement is dropped, not reconstructed "
       "(avg_pool runs as the WebNN averagePool2d intrinsic)")
manual(4636, "sum_pool{size=size, stride=stride, dilation=dilation,", "", "(see the line above)")
for _line in (3367, 3400, 3433):
    manual(_line, "        z[zi..]", "    }\n    @lower {\n        z[zi..]", "lost '}' and '@lower {' lines")


def mechanical(line: str):
    """(new line, [rule names])"""
    rules = []
    new = line
    if "</pre>" in new:
        new = new.replace("</pre>", "")
        rules.append("HTML residue '</pre>' removed")
    for ent, ch in (("&lt;", "<"), ("&gt;", ">"), ("&amp;", "&")):
        if ent in new:
            new = new.replace(ent, ch)
            rules.append(f"HTML entity '{ent}' -> '{ch}'")
    for tag in ("<code>", "</code>", "<u>", "</u>", "<sub>", "</sub>"):
        if tag in new:
            new = new.replace(tag, "")
            rules.append(f"HTML tag '{tag}' removed")
    for esc in ("\\&", "\\_"):
        if esc in new:
            new = new.replace(esc, esc[1])
            rules.append(f"markdown escape residue '{esc}' -> '{esc[1]}'")
    fixed = re.sub(r"'(%s)'\(" % "|".join(BUILTINS), r"`\1`(", new)
    if fixed != new:
        new = fixed
        rules.append("built-in name quoted with ' instead of back-ticks")
    for tex, op in (("\\gg", ">>"), ("\\ll", "<<"), ("\\dots", "..."), ("\\Rightarrow", "=>")):
        if tex in new:
            new = new.replace(tex, op)
            rules.append(f"LaTeX residue '{tex}' -> '{op}'")
    fixed = re.sub(r"_\{(\w+)\}", r"_\1", new)
    if fixed != new:
        new = fixed
        rules.append("LaTeX residue '_{x}' -> '_x'")
    fixed = re.sub(r"\^\{\(([^)]*)\)\}", r"^(\1)", new)
    if fixed != new:
        new = fixed
        rules.append("LaTeX residue '^{(r)}' -> '^(r)'")
    return new, rules


FOLD_BEFORE = re.compile(r"(\+|\*|<<|>>|&&|\|\|)\s*$")


def code_rules(line: str, identifiers: set):
    """Rules that must not touch string literals: 'lhs align' -> 'lhs_align' (an
    identifier printed elsewhere in §4 with its '_'), and '...' where only '..' is
    valid (after an operand rather than after a fold operator; ':= ...')."""
    rules = []
    parts = re.split(r"(\"[^\"]*\"|'[^']*')", line)
    for k in range(0, len(parts), 2):
        code = parts[k]
        for ident in sorted(identifiers, key=len, reverse=True):
            pattern = r"(?<![\w])%s(?![\w])" % "[ _]".join(map(re.escape, ident.split("_")))
            for m in list(re.finditer(pattern, code)):
                if " " in m.group(0):
                    code = code.replace(m.group(0), ident)
                    rules.append(f"'_' printed as a space in '{ident}'")
        out, i = [], 0
        while True:
            j = code.find("...", i)
            if j < 0:
                out.append(code[i:])
                break
            before = code[:j]
            if FOLD_BEFORE.search(before) and not before.rstrip().endswith(":="):
                out.append(code[i:j + 3])
            else:
                out.append(code[i:j] + "..")
                rules.append("'..' printed as '...'")
            i = j + 3
        parts[k] = "".join(out)
    return "".join(parts), rules


def strip_strings(line):
    """The line with string contents blanked and comments cut (for brace counting)."""
    out, q = [], None
    for ch in line:
        if q:
            if ch == q:
                q = None
            out.append(" ")
        elif ch in "\"'":
            q = ch
            out.append(" ")
        elif ch == "#":
            break
        else:
            out.append(ch)
    return "".join(out), q


def extract(seed_lines):
    """[(module, [(seed line no, text)])] for every code fence in §4."""
    start = next(i for i, l in enumerate(seed_lines) if l.startswith("Chapter 4."))
    module, fence, out = None, False, []
    for no, line in enumerate(seed_lines[start:], start + 1):
        if not fence:
            for prefix, name in MODULES:
                if line.startswith(prefix):
                    module = name
        if line.strip().startswith("```"):
            fence = not fence
            continue
        if fence:
            out.append((module, no, line.rstrip("\n")))
    return out


def repair(seed_path):
    with open(seed_path, encoding="utf-8") as f:
        seed = f.read().split("\n")
    log = []
    lines = []
    fences = extract(seed)
    identifiers = set()
    for _, _, text in fences:
        code = re.sub(r"\"[^\"]*\"|'[^']*'", "", text)
        identifiers.update(w for w in re.findall(r"[A-Za-z]\w*_\w+", code) if not w[0].isdigit())
    identifiers = {w for w in identifiers if all(p and p not in ("is", "in", "if", "do") for p in w.split("_"))}
    for module, no, text in fences:
        if no in MANUAL:
            before, after, why = MANUAL[no]
            if before not in text:
                raise SystemExit(f"seed line {no}: expected {before!r} in {text!r}")
            new = text.replace(before, after)
            log.append((no, f"manual: {why}", text.strip(), new.strip()))
            text = new
        new, rules = mechanical(text)
        new, more = code_rules(new, identifiers)
        rules += more
        for r in rules:
            log.append((no, r, text.strip(), new.strip()))
        lines.append([module, no, new])
    # join lines that end inside a string literal (wrapped by the extraction)
    joined = []
    k = 0
    while k < len(lines):
        module, no, text = lines[k]
        while strip_strings(text)[1] is not None and k + 1 < len(lines):
            nxt = lines[k + 1][2]
            if nxt.lstrip()[:1] in "\"'":
                # '"first part' + newline + '"second part"': the first part lost its closing quote
                q = strip_strings(text)[1]
                log.append((no, "lost closing quote of a message part continued on the next line",
                            text.strip(), text.strip() + " " + q))
                text = text.rstrip() + " " + q
                break
            glue = "" if text.endswith("-") else " "
            log.append((no, "string literal wrapped onto the next line: joined",
                        text.strip() + " / " + nxt.strip(), (text.rstrip() + glue + nxt.lstrip()).strip()))
            text = text.rstrip() + glue + nxt.lstrip()
            k += 1
        joined.append((module, no, text))
        k += 1
    # restore lost '}' by structure: a block header inside an open block closes it;
    # a new operator (or the end) closes everything still open
    modules = {}
    depth, current, ops = 0, None, []
    pending = []

    def close_all(no, why):
        nonlocal depth
        while depth > 0:
            pending.append(" " * 4 * (depth - 1) + "}")
            log.append((no, f"lost '}}' restored ({why})", "", "}"))
            depth -= 1

    for module, no, text in joined:
        stripped = text.strip()
        if re.match(r"(public\s+)?operator\b", stripped):
            close_all(no, "before the next operator")
            if current:
                modules.setdefault(current[0], []).append("\n".join(pending))
            pending = []
            current = (module, no)
        elif current is None:
            if stripped:
                log.append((no, "text outside an operator skipped", stripped, ""))
            continue
        if stripped.startswith("@") and depth >= 2:
            while depth > 1:
                pending.append(" " * 4 * (depth - 1) + "}")
                log.append((no, "lost '}' restored (a block header inside an open block)", "", "}"))
                depth -= 1
        code, _ = strip_strings(text)
        depth += code.count("{") - code.count("}")
        if depth < 0:
            raise SystemExit(f"seed line {no}: more '}}' than '{{'")
        pending.append(text)
    close_all(len(seed), "at the end of §4")
    if current:
        modules.setdefault(current[0], []).append("\n".join(pending))
    return modules, log


def main(argv):
    seed_path = argv[1] if len(argv) > 1 else DEFAULT_SEED
    modules, log = repair(seed_path)
    os.makedirs(OUT, exist_ok=True)
    for name, ops in modules.items():
        with open(os.path.join(OUT, name + ".sknd"), "w", encoding="utf-8") as f:
            f.write(f"# NNEF 2.0 standard library, module '{name}': the operator definitions printed in\n"
                    f"# the draft's §4 (seed 004), with text-extraction damage repaired by\n"
                    f"# tools/sknd_from_seed.py (every repair: docs/nnef2-stdlib-repairs.md). Do not edit by hand.\n\n")
            f.write("\n\n".join(op.strip("\n") for op in ops) + "\n")
    with open(os.path.join(ROOT, "docs", "nnef2-stdlib-repairs.md"), "w", encoding="utf-8") as f:
        f.write("# Repairs of the seed's §4 text\n\nWritten by `python3 tools/sknd_from_seed.py`; "
                "one row per repair (seed line, rule, before, after).\n\n| seed line | repair | before | after |\n"
                "|---|---|---|---|\n")
        for no, rule, before, after in log:
            esc = lambda s: " ".join(s.replace("|", "\\|").split())
            f.write(f"| {no} | {esc(rule)} | `` {esc(before)} `` | `` {esc(after)} `` |\n")
    print(f"{sum(len(v) for v in modules.values())} operators in {len(modules)} modules, {len(log)} repairs")


if __name__ == "__main__":
    main(sys.argv)
