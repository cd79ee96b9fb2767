-- dagster-ocr warehouse: the analysts' contract.
-- Table and column names are fixed (see ARCHITECTURE.md); columns may be added, never renamed.
-- page_index is 0-based and physical; page_label is the label printed on the page (or the PDF's
-- /PageLabels); every row that names a page carries both.
-- Every table is keyed by doc_id; the pipeline replaces one document's rows in one transaction.

-- one row per document (a file's bytes: the same bytes under two names are one document)
CREATE TABLE IF NOT EXISTS documents (
    doc_id          VARCHAR NOT NULL,      -- sha256 of the file's bytes
    file_name       VARCHAR NOT NULL,      -- the file name it was first seen under
    source_path     VARCHAR,               -- where the file was found
    stored_path     VARCHAR,               -- the pipeline's content-addressed copy (kept for review)
    kind            VARCHAR,               -- pdf, png, jpeg, tiff or unknown (from magic bytes)
    size_bytes      BIGINT,                -- the file's size
    n_pages         INTEGER,               -- physical pages (0 when it could not be read)
    status          VARCHAR NOT NULL,      -- parsed | quarantined | failed
    error           VARCHAR,               -- why it failed or was quarantined
    title           VARCHAR,               -- the PDF's /Title metadata ('' where it has none)
    n_paragraphs    INTEGER,               -- paragraphs found, headings included
    n_tables        INTEGER,               -- tables found, after merging across pages
    n_ocr_pages     INTEGER,               -- pages whose text came from OCR
    pipeline_version VARCHAR,              -- the dagster-ocr version that parsed it
    parsed_at       TIMESTAMP              -- when this parse was loaded (UTC)
);

-- one row per physical page: its printed label, where its text came from and why
CREATE TABLE IF NOT EXISTS pages (
    doc_id           VARCHAR NOT NULL,     -- the document (documents.doc_id)
    page_index       INTEGER NOT NULL,     -- 0-based physical page number
    page_label       VARCHAR,              -- the label printed on the page (or its /PageLabels entry)
    label_source     VARCHAR,              -- pdf | printed | inferred | physical
    label_confidence DOUBLE,               -- how sure the label is, 0 to 1
    text_source      VARCHAR,              -- text_layer | ocr | none
    engine           VARCHAR,              -- pymupdf | rapidocr | ...
    route_reason     VARCHAR,              -- why text_source was chosen
    width            DOUBLE,               -- page width in PDF points, as displayed
    height           DOUBLE,               -- page height in PDF points, as displayed
    rotation         INTEGER,              -- the page's /Rotate, degrees
    image_coverage   DOUBLE,               -- share of the page covered by images, 0 to 1
    ocr_confidence   DOUBLE,               -- the OCR engine's mean line confidence (NULL for text-layer pages)
    n_lines          INTEGER,              -- text lines on the page
    text             VARCHAR               -- the page's text, line by line
);

-- decoding counts per OCR'd page from engines that report them (the GPU speculative engine):
-- where speculation pays. acceptance_rate = accepted / drafted; tokens_per_target_forward is 1.0
-- without speculation and up to K+1 with it.
CREATE TABLE IF NOT EXISTS ocr_decode_stats (
    doc_id                    VARCHAR NOT NULL,
    page_index                INTEGER NOT NULL,
    page_label                VARCHAR,
    regions                   INTEGER,
    new_tokens                INTEGER,
    target_forwards           INTEGER,
    draft_forwards            INTEGER,
    accepted                  INTEGER,
    acceptance_rate           DOUBLE,
    tokens_per_target_forward DOUBLE,
    tokens_per_s              DOUBLE,
    seconds                   DOUBLE
);

-- every text line, furniture included (page numbers, running headers stay queryable here)
CREATE TABLE IF NOT EXISTS lines (
    doc_id      VARCHAR NOT NULL,          -- the document
    page_index  INTEGER NOT NULL,          -- 0-based physical page
    line_index  INTEGER NOT NULL,          -- 0-based position on the page
    page_label  VARCHAR,                   -- the page's printed label
    text        VARCHAR,                   -- the line's text
    x0 DOUBLE, y0 DOUBLE, x1 DOUBLE, y1 DOUBLE,    -- the box on the page: PDF points, origin top-left of the displayed page
    font        VARCHAR,                   -- font of its first span
    size        DOUBLE,                    -- font size, points
    bold        BOOLEAN,                   -- set in a bold font
    confidence  DOUBLE,                    -- OCR confidence (1.0 for the text layer)
    furniture   VARCHAR                    -- NULL, page_number, header or footer
);

-- the heading outline: one row per section heading
CREATE TABLE IF NOT EXISTS sections (
    doc_id      VARCHAR NOT NULL,          -- the document
    section_id  VARCHAR NOT NULL,          -- unique within the document
    parent_id   VARCHAR,                   -- the enclosing section (NULL at the top)
    level       INTEGER,                   -- 1 for a top-level heading, 2 below it, ...
    title       VARCHAR,                   -- the heading's text
    number      VARCHAR,                   -- its printed number (2.1, A, IV), if any
    page_index  INTEGER,                   -- 0-based physical page of the heading
    page_label  VARCHAR,                   -- printed label of that page
    ordinal     INTEGER                    -- 0-based order in the document
);

-- the document's text in reading order, page furniture removed: headings, paragraphs and each
-- table (kind 'table': its text, a line per row, cells separated by a space; paragraph_id is its
-- table_id), so reading the rows in order reads the whole document once
CREATE TABLE IF NOT EXISTS paragraphs (
    doc_id          VARCHAR NOT NULL,      -- the document
    paragraph_id    VARCHAR NOT NULL,      -- unique within the document
    section_id      VARCHAR,               -- the section it sits in
    reading_order   INTEGER NOT NULL,      -- 0-based position in the document, tables included
    page_index      INTEGER NOT NULL,      -- 0-based physical page it starts on
    page_label      VARCHAR,               -- printed label of that page
    last_page_index INTEGER,               -- 0-based physical page it ends on
    text            VARCHAR,               -- the paragraph's text, lines joined
    x0 DOUBLE, y0 DOUBLE, x1 DOUBLE, y1 DOUBLE,    -- the box on the page: PDF points, origin top-left of the displayed page
    flags           VARCHAR[],             -- validation flags (replacement_char, mojibake, ...)
    kind            VARCHAR,               -- body | heading | clause | list_item | table
    continued       BOOLEAN                -- joined across a page break or past a table
);

-- one row per table, merged across page breaks where the evidence agrees
CREATE TABLE IF NOT EXISTS tables (
    doc_id            VARCHAR NOT NULL,    -- the document
    table_id          VARCHAR NOT NULL,    -- unique within the document
    first_page_index  INTEGER NOT NULL,    -- 0-based physical page it starts on
    last_page_index   INTEGER NOT NULL,    -- 0-based physical page it ends on
    first_page_label  VARCHAR,             -- printed label of its first page
    last_page_label   VARCHAR,             -- printed label of its last page
    n_rows            INTEGER,             -- rows, header rows included
    n_cols            INTEGER,             -- columns
    header_rows       INTEGER,             -- leading rows that are headers
    pages             INTEGER[],           -- every physical page that contributed rows
    merge_kind        VARCHAR,             -- '' (one part), rows (continued on the next page, or sections under the heads printed again) or columns
    strategy          VARCHAR,             -- the finder that found it
    caption           VARCHAR,             -- the caption printed with it, if any
    x0 DOUBLE, y0 DOUBLE, x1 DOUBLE, y1 DOUBLE    -- the box on the page: PDF points, origin top-left of the displayed page
);

-- one row per table cell
CREATE TABLE IF NOT EXISTS table_cells (
    doc_id      VARCHAR NOT NULL,          -- the document
    table_id    VARCHAR NOT NULL,          -- the table (tables.table_id)
    row_idx     INTEGER NOT NULL,          -- 0-based; a spanning cell sits at its first row/col
    col_idx     INTEGER NOT NULL,          -- 0-based
    text        VARCHAR,                   -- the cell's text
    page_index  INTEGER,                   -- the page this row came from (merged tables span pages)
    page_label  VARCHAR,                   -- printed label of that page
    row_span    INTEGER,                   -- rows the cell spans
    col_span    INTEGER,                   -- columns the cell spans
    is_header   BOOLEAN,                   -- in a header row
    suspicious  BOOLEAN,                   -- text the validation flagged (garbled, replacement characters)
    x0 DOUBLE, y0 DOUBLE, x1 DOUBLE, y1 DOUBLE    -- the box on the page: PDF points, origin top-left of the displayed page
);

-- one row per check expectation per document per evaluation (latest wins per doc_id, check_name)
CREATE TABLE IF NOT EXISTS quality_results (
    doc_id          VARCHAR NOT NULL,
    check_name      VARCHAR NOT NULL,      -- the asset check: one expectation suite
    expectation     VARCHAR NOT NULL,      -- the expectation's name within the suite
    severity        VARCHAR NOT NULL,      -- ERROR blocks the knowledge base, WARN does not
    success         BOOLEAN NOT NULL,      -- the expectation held
    observed_value  VARCHAR,               -- what was measured, as text (observed_number: as a number)
    threshold       VARCHAR,               -- the bound it is judged against, as text
    description     VARCHAR,               -- what it checks, in words
    evaluated_at    TIMESTAMP              -- UTC
);

-- a reviewer's decision to load a document that failed a check (see docs/quality-gate.md, "Approve by hand")
CREATE TABLE IF NOT EXISTS approvals (
    doc_id      VARCHAR NOT NULL,
    approved_by VARCHAR NOT NULL,
    reason      VARCHAR NOT NULL,
    approved_at TIMESTAMP NOT NULL
);

-- the knowledge base: searchable chunks with citations to printed pages
CREATE TABLE IF NOT EXISTS kb_chunks (
    doc_id          VARCHAR NOT NULL,      -- the document
    chunk_id        VARCHAR NOT NULL,      -- unique within the document
    source_kind     VARCHAR NOT NULL,      -- paragraph | table
    source_id       VARCHAR NOT NULL,      -- paragraph_id or table_id
    section_id      VARCHAR,               -- the section it comes from
    section_title   VARCHAR,               -- that section's heading
    page_index      INTEGER,               -- 0-based physical page it starts on
    page_label      VARCHAR,               -- printed label of that page
    last_page_index INTEGER,               -- 0-based physical page it ends on
    last_page_label VARCHAR,               -- printed label of that page
    text            VARCHAR NOT NULL,      -- the text searched and cited
    citation        VARCHAR NOT NULL,      -- e.g. "service_agreement.pdf, p. iv, 2. Services › 2.1 Scope"
    paragraph_ids   VARCHAR[],             -- every paragraph the chunk holds (empty for tables)
    loaded_at       TIMESTAMP              -- when it was loaded (UTC)
);

-- one embedding per knowledge-base chunk (all-MiniLM-L6-v2, unit length), for vector and hybrid
-- search with array_cosine_similarity. text_md5 = md5(kb_chunks.text) when the vector was made:
-- search joins on it, so a vector never outlives the text it was computed from. input_md5 (added by
-- migration 11) = md5 of what the model read (context line, then the text; a table's without its
-- figures): a re-load reuses a vector only while that is unchanged, NULL re-embeds once.
CREATE TABLE IF NOT EXISTS kb_embeddings (
    doc_id      VARCHAR NOT NULL,
    chunk_id    VARCHAR NOT NULL,
    model       VARCHAR NOT NULL,          -- e.g. "all-MiniLM-L6-v2"
    text_md5    VARCHAR NOT NULL,
    embedding   FLOAT[384] NOT NULL,
    embedded_at TIMESTAMP
);
