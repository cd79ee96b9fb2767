-- Documents by status: how many are parsed, quarantined or failed, and which files they are.
-- (document_status, a view in sql/views.sql, has one row per document with its counts.)
SELECT status,
       count(*)                                   AS documents,
       sum(coalesce(n_pages, 0))                  AS pages,
       sum(kb_chunks)                             AS kb_chunks,
       list(file_name ORDER BY file_name)         AS files
FROM document_status
GROUP BY status
ORDER BY CASE status WHEN 'parsed' THEN 0 WHEN 'quarantined' THEN 1 ELSE 2 END, status;
