"""Table extraction per page and merging of tables that continue across pages.

The default finder ('auto') reads ruled tables with PyMuPDF's line finder (``use_layout=False``,
run only on pages that draw a grid) and finds every other table by text alignment, the way
camelot's stream mode and Nurminen's tabula algorithm do: words are cut into chunks at wide gaps,
runs of multi-chunk lines form table areas, column gutters are x ranges no word covers, rows are
text lines (stacked header lines and wrapped cells joined). Charts and diagrams, found in the
page's drawings (``charts``), are no place to look: their tick labels, legends and step labels
stay body text, and a ruled grid holding a data series is a chart's panels, no table. Cell text
always comes from word boxes (``Table.extract()`` drops inter-word spaces). Other finders remain
selectable for comparison (see ``TableSettings.finder`` and bench/tables_icdar.py).
Merging is evidence-based: the last table on page N is joined with the first table on page N+1
only when nothing but page furniture or a few short lines separates them, the column layouts
agree, and (optionally) a "continued" caption says so. A continuation's repeated header is dropped.
A continuation of another layout is mapped onto the table's columns by where its columns lie (a wider
last column, a figure and its mark read as two, a totals page), except where the page set its columns
to its own widths (a stub narrower or wider for its own labels: as many columns, each of the kind it
continues), which is read column for column.
A wide table whose columns continue on the next page (same rows) is joined on its stub column when
the continuation repeats the stubs row for row AND a "continued" marker or the same caption says so.
What a join keeps once (a continuation's repeated header, its repeated stub column) is recorded in
``Table.repeats``, so the text is accounted to the table and not to the paragraphs (nothing lost).

Modules, each importing only those above it:

- ``settings``: ``TableSettings``, the finder names, the caption and "continued" patterns.
- ``words``: the page's words and text lines as the finders read them; text normalisation.
- ``grid``: ruled tables, a port of PyMuPDF's edge and cell code fed word boxes, run only on the
  PyMuPDF release it was ported from (``grid.PORTED_FROM``; any other uses ``find_tables``).
- ``charts``: chart and diagram regions from the drawing (data series, bars, tick-marked axes,
  flow charts' boxes and arrows), where the text finder builds no table.
- ``cells``: ``_Part`` (one table on one page) read from a PyMuPDF grid; spans and suspicious cells.
- ``stream``: the text-alignment finder, and the test that keeps a found table (``_keep``).
- ``grouped``: a ruled grid whose rules part only groups of columns (Total | Male | Female, no rule
  between the sub-columns nor the rows), read again by text alignment inside its frame.
- ``prose``: running text a finder took for a table (numbered transcript lines, gapped
  right-to-left prose), rejected so its lines stay body text (``_running_text``).
- ``sideways``: pages whose tables are printed sideways (text up or down, the whole page or beside
  upright text) or upside down, read turned and turned back.
- ``opinion``: the learned layout model's veto of text-aligned parts it sees as prose or a figure
  (opt-in, ``TableSettings.layout_veto``).
- ``rows``: row continuations (the gap, column layout and repeated header tests) and their table.
- ``columns``: column continuations aligned on the stub column, and their table.
- ``document``: ``extract_tables``: which finder reads each page, captions, and the merging driver.
"""

from dagster_ocr.tables.document import extract_tables
from dagster_ocr.tables.settings import TableSettings

__all__ = ["TableSettings", "extract_tables"]
