-- Views over the contract tables (recreated on every connection that writes).

-- documents held back from the knowledge base, with every reason: the blocking (ERROR)
-- expectations that failed, or the parse error of a file that could not be read. A document a
-- reviewer approved but that has not been re-materialized yet shows its approval here.
CREATE OR REPLACE VIEW quarantine AS
SELECT d.doc_id, d.file_name, d.status, d.stored_path,
       coalesce(d.error, '') AS error,
       list(q.check_name || '.' || q.expectation || ': observed ' || coalesce(q.observed_value, '?')
            || ' (threshold ' || coalesce(q.threshold, '-') || ')' ORDER BY q.check_name, q.expectation)
           FILTER (WHERE q.success IS NOT NULL) AS failed_expectations,
       any_value(a.approved_by) AS approved_by,
       any_value(a.reason) AS approval_reason,
       max(q.evaluated_at) AS evaluated_at
FROM documents d
LEFT JOIN quality_results q
       ON q.doc_id = d.doc_id AND NOT q.success AND q.severity = 'ERROR'
LEFT JOIN approvals a ON a.doc_id = d.doc_id
WHERE d.status IN ('quarantined', 'failed')
GROUP BY d.doc_id, d.file_name, d.status, d.stored_path, d.error;

-- every failed expectation of every document, blocking or not (WARN rows included), with the
-- approval that let a blocked document through, if any
CREATE OR REPLACE VIEW quality_failures AS
SELECT d.file_name, d.status, q.check_name, q.expectation, q.severity, q.observed_value, q.threshold,
       q.description, a.approved_by, a.reason AS approval_reason, q.evaluated_at, q.doc_id
FROM quality_results q
JOIN documents d USING (doc_id)
LEFT JOIN approvals a USING (doc_id)
WHERE NOT q.success;

-- one row per suite per document: passed, warned or blocked (what the Dagster UI shows per check)
CREATE OR REPLACE VIEW quality_checks AS
SELECT q.doc_id, d.file_name, q.check_name,
       CASE WHEN bool_and(q.success) THEN 'passed'
            WHEN bool_or(NOT q.success AND q.severity = 'ERROR') THEN
                 CASE WHEN d.status = 'parsed' THEN 'approved' ELSE 'blocked' END
            ELSE 'warned' END AS outcome,
       count(*) AS expectations,
       count(*) FILTER (WHERE NOT q.success) AS failed,
       max(q.evaluated_at) AS evaluated_at
FROM quality_results q
JOIN documents d USING (doc_id)
GROUP BY q.doc_id, d.file_name, q.check_name, d.status;

-- documents by status, with what each holds and how much of it reached the knowledge base
CREATE OR REPLACE VIEW document_status AS
SELECT d.status, d.file_name, d.n_pages, d.n_paragraphs, d.n_tables, d.n_ocr_pages,
       (SELECT count(*) FROM kb_chunks k WHERE k.doc_id = d.doc_id) AS kb_chunks,
       coalesce(d.error, '') AS reason, d.parsed_at, d.doc_id
FROM documents d;

-- physical page <-> printed label, both ways (a label may repeat across parts of a document)
CREATE OR REPLACE VIEW page_label_map AS
SELECT doc_id, page_index, page_label, label_source,
       count(*) OVER (PARTITION BY doc_id, page_label) > 1 AS label_repeats
FROM pages;

-- the knowledge base with each chunk's document, for citing: "file, p. label, section"
CREATE OR REPLACE VIEW kb_citations AS
SELECT k.doc_id, d.file_name, k.chunk_id, k.source_kind, k.source_id, k.section_title,
       k.page_index, k.page_label, k.last_page_label, k.citation, k.text
FROM kb_chunks k
JOIN documents d USING (doc_id)
WHERE d.status = 'parsed';

-- the document as one reading-order sequence: headings, paragraphs and tables (as Markdown), what
-- analysts, the knowledge base and the exports read as "the document's text". reading_order is
-- 0-based over the whole document. Headings and paragraphs keep the paragraph stage's order (a
-- heading comes first in its section); a table sits where the warehouse placed it among them
-- (tables.precedes_reading_order: its own row's place in paragraphs.reading_order, which counts
-- tables too; in documents written before tables had rows there, the paragraph it precedes; see
-- dagster_ocr/blocks.py). A table read as running text (tables.read_as_text) is left out: its
-- text is in the paragraphs. source_id is the paragraph_id or table_id; heading_level the
-- heading's sections.level.
CREATE OR REPLACE VIEW document_blocks AS
WITH blocks AS (
    SELECT p.doc_id, p.page_index, p.page_label, p.reading_order AS anchor, 1 AS tie,
           CASE WHEN p.kind = 'heading' THEN 'heading' ELSE 'paragraph' END AS kind,
           p.section_id, p.text, p.x0, p.y0, p.x1, p.y1,
           p.paragraph_id AS source_id, coalesce(p.last_page_index, p.page_index) AS last_page_index,
           s.level AS heading_level
    FROM paragraphs p
    LEFT JOIN sections s
           ON p.kind = 'heading' AND s.doc_id = p.doc_id AND s.section_id = p.section_id
    WHERE p.kind IS DISTINCT FROM 'table'  -- a table's own row: the branch below gives its Markdown
    UNION ALL
    SELECT t.doc_id, t.first_page_index, t.first_page_label, t.precedes_reading_order, 0,
           'table', t.section_id, t.markdown, t.x0, t.y0, t.x1, t.y1,
           t.table_id, t.last_page_index, NULL
    FROM tables t
    WHERE NOT coalesce(t.read_as_text, false)
)
SELECT doc_id, page_index, page_label,
       (row_number() OVER (PARTITION BY doc_id
                           ORDER BY anchor NULLS LAST, tie, page_index, y0, x0, source_id) - 1)::INTEGER
           AS reading_order,
       kind, section_id, text, x0, y0, x1, y1, source_id, last_page_index, heading_level
FROM blocks;

-- what happened to each inbox file: every file ever seen (duplicates included) with the document
-- its bytes became, that document's status and reason. A byte-identical copy shares the original's
-- document (duplicate_of names the first file seen with those bytes); a file not parsed yet shows
-- status 'pending'.
CREATE OR REPLACE VIEW file_status AS
SELECT f.path, f.file_name, f.size, f.mtime, f.first_seen, f.last_seen, f.duplicate_of, f.doc_id,
       coalesce(d.status, 'pending') AS status,
       d.error,
       d.file_name AS document_file_name,
       d.n_pages, d.n_paragraphs, d.n_tables, d.parsed_at,
       CASE WHEN d.doc_id IS NULL THEN 'registered, not parsed yet'
            WHEN d.status = 'parsed' THEN 'parsed'
            ELSE d.status || ': ' || coalesce(d.error, '?') END
       || CASE WHEN f.duplicate_of IS NOT NULL
               THEN ' (same bytes as ' || f.duplicate_of || ': one document for both)'
               ELSE '' END AS outcome
FROM files f
LEFT JOIN documents d USING (doc_id);

-- conservation of text per document: where the characters of its text layer (or OCR output)
-- went, as counts and shares (see text_conservation, per page, and dagster_ocr/conservation.py)
CREATE OR REPLACE VIEW document_conservation AS
SELECT c.doc_id, d.file_name, d.status,
       sum(c.chars)::BIGINT AS chars,
       sum(c.paragraph_chars + c.heading_chars)::BIGINT AS text_chars,
       sum(c.table_chars)::BIGINT AS table_chars,
       sum(c.page_number_chars + c.header_chars + c.footer_chars)::BIGINT AS furniture_chars,
       sum(c.lost_chars)::BIGINT AS lost_chars,
       sum(c.unsourced_chars)::BIGINT AS unsourced_chars,
       round(sum(c.table_chars) / nullif(sum(c.chars), 0), 4) AS table_share,
       round(sum(c.page_number_chars + c.header_chars + c.footer_chars) / nullif(sum(c.chars), 0), 4)
           AS furniture_share,
       round(sum(c.lost_chars) / nullif(sum(c.chars), 0), 4) AS lost_share,
       count(*) FILTER (WHERE c.lost_chars > 0) AS pages_with_losses
FROM text_conservation c
JOIN documents d USING (doc_id)
GROUP BY c.doc_id, d.file_name, d.status;
