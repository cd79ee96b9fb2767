-- Which documents mention a fee in yen, and where (printed page label, section)?
SELECT d.file_name, c.page_label, c.section_title, left(c.text, 90) AS excerpt
FROM kb_chunks c JOIN documents d USING (doc_id)
WHERE c.text LIKE '%¥%'
ORDER BY d.file_name, c.page_index
LIMIT 5;
