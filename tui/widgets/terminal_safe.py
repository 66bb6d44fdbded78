"""The dashboard's side of kubectl_dra.terminal_text: cluster text in Rich renderables made safe.

Rich drops a few control codes (BEL, CR) from a Text but passes ESC, C1 codes and bidi overrides
on to the terminal, so a device attribute could clear the screen or retitle the window when its
pool is selected. Labels are rebuilt with the unsafe characters shown as escapes before layout;
a whole pane is filtered segment by segment after layout (`TerminalSafe`), which covers every
renderable a view builds (text, tables, groups) in one place.
"""

from __future__ import annotations

from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.measure import Measurement
from rich.segment import Segment
from rich.text import Text

from kubectl_dra.terminal_text import has_unsafe, safe_line, safe_text


def safe_label(text: Text | str, *, multiline: bool = False) -> Text:
    """A Text (never markup) with unsafe characters shown as escapes and its styles kept;
    newlines are kept only when `multiline`."""
    make_safe = safe_text if multiline else safe_line
    if isinstance(text, str):
        return Text(make_safe(text))  # before Text(), which would drop BEL and CR unseen
    plain = text.plain
    if make_safe(plain) == plain:
        return text
    cuts = sorted({0, len(plain), *(s.start for s in text.spans), *(s.end for s in text.spans)})
    moved = {0: 0}
    pieces = []
    for start, end in zip(cuts, cuts[1:]):
        pieces.append(make_safe(plain[start:end]))
        moved[end] = moved[start] + len(pieces[-1])
    result = Text("".join(pieces), style=text.style, justify=text.justify, overflow=text.overflow,
                  no_wrap=text.no_wrap, end=text.end, tab_size=text.tab_size)
    for span in text.spans:
        result.stylize(span.style, moved[span.start], moved[span.end])
    return result


class TerminalSafe:
    """Renders `renderable` with every text segment passed through safe_text. Layout happened
    before, counting an unsafe character as zero cells: a line holding one may be cropped at the
    pane's edge, but nothing reaches the terminal raw."""

    def __init__(self, renderable: RenderableType) -> None:
        self.renderable = renderable

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        for segment in console.render(self.renderable, options):
            if segment.control or not has_unsafe(segment.text):
                yield segment
            else:
                yield Segment(safe_text(segment.text), segment.style)

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement.get(console, options, self.renderable)
