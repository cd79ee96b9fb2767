-- Which documents mention a fee in yen, and where (printed page label, section)?
SELECT d.file_name, c.page_label, coalesce(c.section_title, c.source_kind) AS section, left(c.text, 80) AS excerpt
FROM kb_chunks c JOIN documents d USING (doc_id)
WHERE c.text LIKE '%¥%'
ORDER BY d.file_name, c.page_index
LIMIT 5;
