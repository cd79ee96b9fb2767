-- The tables of one document, one row per table row: the cells in column order, with the printed
-- page each row came from (a table merged across pages cites every page). Change the file name.
SET VARIABLE file_name = 'service_agreement.pdf';

SELECT t.table_id, t.caption, c.row_idx,
       bool_and(c.is_header)                                  AS is_header,
       any_value(c.page_label)                                AS page_label,
       list(coalesce(c.text, '') ORDER BY c.col_idx)          AS cells,
       string_agg(coalesce(c.text, ''), ' | ' ORDER BY c.col_idx) AS row_text
FROM documents d
JOIN tables t USING (doc_id)
JOIN table_cells c ON c.doc_id = t.doc_id AND c.table_id = t.table_id
WHERE d.file_name = getvariable('file_name')
GROUP BY t.table_id, t.caption, t.first_page_index, c.row_idx
ORDER BY t.first_page_index, t.table_id, c.row_idx;
