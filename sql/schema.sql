-- dagster-ocr warehouse: the analysts' contract.
-- Table and column names are fixed (see ARCHITECTURE.md); columns may be added, never renamed.
-- page_index is 0-based and physical; page_label is the label printed on the page (or the PDF's
-- /PageLabels); every row that names a page carries both.
-- Every table is keyed by doc_id; the pipeline replaces one document's rows in one transaction.

CREATE TABLE IF NOT EXISTS documents (
    doc_id          VARCHAR NOT NULL,      -- sha256 of the file's bytes
    file_name       VARCHAR NOT NULL,
    source_path     VARCHAR,               -- where the file was found
    stored_path     VARCHAR,               -- the pipeline's content-addressed copy (kept for review)
    kind            VARCHAR,               -- pdf, png, jpeg, tiff or unknown (from magic bytes)
    size_bytes      BIGINT,
    n_pages         INTEGER,
    status          VARCHAR NOT NULL,      -- parsed | quarantined | failed
    error           VARCHAR,               -- why it failed or was quarantined
    title           VARCHAR,
    n_paragraphs    INTEGER,
    n_tables        INTEGER,
    n_ocr_pages     INTEGER,
    pipeline_version VARCHAR,
    parsed_at       TIMESTAMP
);

CREATE TABLE IF NOT EXISTS pages (
    doc_id           VARCHAR NOT NULL,
    page_index       INTEGER NOT NULL,
    page_label       VARCHAR,
    label_source     VARCHAR,              -- pdf | printed | inferred | physical
    label_confidence DOUBLE,
    text_source      VARCHAR,              -- text_layer | ocr | none
    engine           VARCHAR,              -- pymupdf | rapidocr | ...
    route_reason     VARCHAR,              -- why text_source was chosen
    width            DOUBLE,
    height           DOUBLE,
    rotation         INTEGER,
    image_coverage   DOUBLE,
    ocr_confidence   DOUBLE,
    n_lines          INTEGER,
    text             VARCHAR
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
    doc_id      VARCHAR NOT NULL,
    page_index  INTEGER NOT NULL,
    line_index  INTEGER NOT NULL,
    page_label  VARCHAR,
    text        VARCHAR,
    x0 DOUBLE, y0 DOUBLE, x1 DOUBLE, y1 DOUBLE,
    font        VARCHAR,
    size        DOUBLE,
    bold        BOOLEAN,
    confidence  DOUBLE,
    furniture   VARCHAR                    -- NULL, page_number, header or footer
);

CREATE TABLE IF NOT EXISTS sections (
    doc_id      VARCHAR NOT NULL,
    section_id  VARCHAR NOT NULL,
    parent_id   VARCHAR,
    level       INTEGER,
    title       VARCHAR,
    number      VARCHAR,
    page_index  INTEGER,
    page_label  VARCHAR,
    ordinal     INTEGER
);

CREATE TABLE IF NOT EXISTS paragraphs (
    doc_id          VARCHAR NOT NULL,
    paragraph_id    VARCHAR NOT NULL,
    section_id      VARCHAR,
    reading_order   INTEGER NOT NULL,      -- 0-based position in the document
    page_index      INTEGER NOT NULL,
    page_label      VARCHAR,
    last_page_index INTEGER,
    text            VARCHAR,
    x0 DOUBLE, y0 DOUBLE, x1 DOUBLE, y1 DOUBLE,
    flags           VARCHAR[],             -- validation flags (replacement_char, mojibake, ...)
    kind            VARCHAR,               -- body | heading | clause | list_item
    continued       BOOLEAN                -- joined across a page break or past a table
);

CREATE TABLE IF NOT EXISTS tables (
    doc_id            VARCHAR NOT NULL,
    table_id          VARCHAR NOT NULL,
    first_page_index  INTEGER NOT NULL,
    last_page_index   INTEGER NOT NULL,
    first_page_label  VARCHAR,
    last_page_label   VARCHAR,
    n_rows            INTEGER,
    n_cols            INTEGER,
    header_rows       INTEGER,
    pages             INTEGER[],           -- every physical page that contributed rows
    merge_kind        VARCHAR,             -- '' (one page), rows or columns
    strategy          VARCHAR,
    caption           VARCHAR,
    x0 DOUBLE, y0 DOUBLE, x1 DOUBLE, y1 DOUBLE
);

CREATE TABLE IF NOT EXISTS table_cells (
    doc_id      VARCHAR NOT NULL,
    table_id    VARCHAR NOT NULL,
    row_idx     INTEGER NOT NULL,          -- 0-based; a spanning cell sits at its first row/col
    col_idx     INTEGER NOT NULL,
    text        VARCHAR,
    page_index  INTEGER,                   -- the page this row came from (merged tables span pages)
    page_label  VARCHAR,
    row_span    INTEGER,
    col_span    INTEGER,
    is_header   BOOLEAN,
    suspicious  BOOLEAN,
    x0 DOUBLE, y0 DOUBLE, x1 DOUBLE, y1 DOUBLE
);

-- one row per check expectation per document per evaluation (latest wins per doc_id, check_name)
CREATE TABLE IF NOT EXISTS quality_results (
    doc_id          VARCHAR NOT NULL,
    check_name      VARCHAR NOT NULL,
    expectation     VARCHAR NOT NULL,
    severity        VARCHAR NOT NULL,      -- ERROR blocks the knowledge base, WARN does not
    success         BOOLEAN NOT NULL,
    observed_value  VARCHAR,
    threshold       VARCHAR,
    description     VARCHAR,
    evaluated_at    TIMESTAMP
);

-- a reviewer's decision to load a document that failed a check (see README "Quarantine")
CREATE TABLE IF NOT EXISTS approvals (
    doc_id      VARCHAR NOT NULL,
    approved_by VARCHAR NOT NULL,
    reason      VARCHAR NOT NULL,
    approved_at TIMESTAMP NOT NULL
);

-- the knowledge base: searchable chunks with citations to printed pages
CREATE TABLE IF NOT EXISTS kb_chunks (
    doc_id          VARCHAR NOT NULL,
    chunk_id        VARCHAR NOT NULL,
    source_kind     VARCHAR NOT NULL,      -- paragraph | table
    source_id       VARCHAR NOT NULL,      -- paragraph_id or table_id
    section_id      VARCHAR,
    section_title   VARCHAR,
    page_index      INTEGER,
    page_label      VARCHAR,
    last_page_index INTEGER,
    last_page_label VARCHAR,
    text            VARCHAR NOT NULL,
    citation        VARCHAR NOT NULL,      -- e.g. "service_agreement.pdf, p. iv, 2. Services › 2.1 Scope"
    paragraph_ids   VARCHAR[],             -- every paragraph the chunk holds (empty for tables)
    loaded_at       TIMESTAMP
);

-- one embedding per knowledge-base chunk (all-MiniLM-L6-v2, unit length), for vector and hybrid
-- search with array_cosine_similarity. text_md5 = md5(kb_chunks.text) when the vector was made:
-- search joins on it, so a vector never outlives the text it was computed from.
CREATE TABLE IF NOT EXISTS kb_embeddings (
    doc_id      VARCHAR NOT NULL,
    chunk_id    VARCHAR NOT NULL,
    model       VARCHAR NOT NULL,          -- e.g. "all-MiniLM-L6-v2"
    text_md5    VARCHAR NOT NULL,
    embedding   FLOAT[384] NOT NULL,
    embedded_at TIMESTAMP
);
