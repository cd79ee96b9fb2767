-- A document's text in reading order, one block per row: headings, paragraphs and tables (as
-- Markdown), each with its printed page and section; what the knowledge base and exports read.
SET VARIABLE file_name = 'service_agreement.pdf';

SELECT b.reading_order, b.page_label, b.kind, s.title AS section, b.text
FROM document_blocks b
JOIN documents d USING (doc_id)
LEFT JOIN sections s ON s.doc_id = b.doc_id AND s.section_id = b.section_id
WHERE d.file_name = getvariable('file_name')
ORDER BY b.reading_order;
