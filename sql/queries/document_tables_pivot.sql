-- The tables of one document as a grid: one row per table row, one column per table column
-- ("0", "1", ...), the way a spreadsheet shows it. Change the file name.
SET VARIABLE file_name = 'service_agreement.pdf';

PIVOT (
    SELECT c.table_id, c.row_idx, c.col_idx, coalesce(c.text, '') AS text
    FROM table_cells c JOIN documents d USING (doc_id)
    WHERE d.file_name = getvariable('file_name')
)
ON col_idx
USING first(text)
GROUP BY table_id, row_idx
ORDER BY table_id, row_idx;
