"""Paragraph and section reconstruction from positioned lines.

The input is what the text layer or OCR produced: lines with bboxes, fonts and sizes, in no
trustworthy order (OCR lines come in the OCR stage's reading order, which is kept). The steps, per
document:

1. **Furniture.** Lines already marked, the printed page number found by the label stage
   (``PageLabel.line_index``) and running headers/footers (text that, with digits normalised,
   recurs in the top or bottom zone of many pages; a body-shaped line attached to the body
   block does not count as a recurrence) are marked on the ``Page`` objects and left
   out. Furniture never takes a page's body: a page whose every line would be furniture keeps
   them as body text (bare page numbers aside), and a document where running heads and page
   numbers would take most of its text (``furniture_max_share``: a form, a form letter, a short
   contract whose pages share their lines) has no furniture at all. Lines inside a table region
   are left out too: the table stage owns them (unless the "table" is a narrow grid of
   sentence-length cells: columns of prose, kept as paragraphs).
2. **Rows.** Fragments of one visual line (the text layer often splits "5.1" from its title, or a
   bullet from its item) are merged into rows. A leading fragment made only of a lone bullet,
   control or private-use glyph (Wingdings bullets and check boxes) becomes the marker "•".
3. **Reading order.** A text-layer page is read in its content-stream order where that order is a
   plausible reading (``stream_order``; ``columns._stream_flows``): the body's rows, taken in the
   order the producer wrote them, each go down their column, start a column to the right (left on
   a right-to-left page) and higher, or are a full-width row below all read so far; runs of rows
   set apart by type (another size, bold or italic where the body is not: a sidebar, a pull quote,
   a boxed note, a caption) are asides, read where the stream puts them (first when they lie wholly
   above the body: a title written last). One step back up a column, across a line or down into
   another column (a grid of blocks read band by band), or rows printed over each other, and the
   page is read geometrically instead, by recursive layout analysis: a vertical channel of white
   space with enough text on both sides splits rows into columns (rows crossing it are full-width
   and break the column flow), and each column is analysed again. Where no channel runs through a whole
   region (parts of the page with different gutters), the region is cut horizontally at the
   widest gap that exposes one; a short row across a channel with column text beside it (a
   caption) floats after its band's columns. A band mostly in a right-to-left script reads its
   columns from the right, and its rows join their fragments from the right. On an OCR page the
   lines keep the order the OCR stage gave them (``ocr.order.reading_order``, from the whole
   image). A drop cap is joined to the word it begins.
4. **Paragraphs.** Consecutive rows of one flow are split on a vertical gap that is large for the
   local line height, a change of indentation, font size or style, a short line ending a
   sentence, or a clause/list start ("Article 5", "第五条", "5.2", "(a)", "§ 3", "1.", "•").
   Indentation and short lines are measured from the right edge on right-to-left rows.
   Across a column or page break, a paragraph that ends without terminal punctuation is
   continued by a row that starts in lower case (or CJK on both sides), past an inset set into
   its column (a pull quote or a boxed note with the column's lines set short beside it, however
   large its type), and a row back at the paragraph's own left edge after lines set short beside
   an inset goes on with it, as does a row of running words in the body's type under a box of
   finished sentences in another type (a callout) within the column; across pages the joined
   paragraph is marked ``continued``. Lines
   are joined with a space (none between CJK characters) and de-hyphenated only when the
   continuation starts in lower case.
5. **Sections.** Headings are short paragraphs set larger than the body, wholly bold or italic,
   or numbered ("1 Introduction", "3.2 Scope", "Article 5", "ARTICLE V", "第五条"). Their level
   comes from the numbering depth, else from the rank of their font size; each section's parent
   is the nearest earlier section of a lower level.

Ids: ``section_id`` is ``s{ordinal}`` (0-based). ``paragraph_id`` is
``p_{page label}_{section ordinal}_{ordinal within section}``, with ``n`` as the section part
for paragraphs before the first heading and the page label reduced to ``[A-Za-z0-9.-]``. The
pair (section, ordinal within section) is already unique in a document, so the id is unique
whatever the labels are; the label is there for people reading the id.

Modules, bottom to top (each imports only those above it in this list):

* ``settings``: ``ParagraphSettings``.
* ``patterns``: text patterns (clause and list starts, numbered headings, sentence ends, ``is_cjk``).
* ``rows``: step 2, fragments into ``_Row`` objects.
* ``furniture``: step 1, furniture and table regions; drop caps (step 3's last sentence).
* ``columns``: step 3, columns and reading order.
* ``grouping``: step 4, rows into paragraphs (``_Grouper``, fed one page at a time).
* ``headings``: step 5, headings and their levels.
* ``assembly``: ``build_paragraphs``: the steps in order, the section tree, ids and labels.

Names with a leading underscore are private to the package.
"""

from __future__ import annotations

from dagster_ocr.paragraphs.assembly import build_paragraphs
from dagster_ocr.paragraphs.patterns import clause_number, is_cjk
from dagster_ocr.paragraphs.settings import ParagraphSettings

__all__ = ["ParagraphSettings", "build_paragraphs", "clause_number", "is_cjk"]
