-- Views over the contract tables (recreated on every connection that writes).

-- documents held back from the knowledge base, with every reason
CREATE OR REPLACE VIEW quarantine AS
SELECT d.doc_id, d.file_name, d.status, d.stored_path,
       coalesce(d.error, '') AS error,
       list(q.check_name || '.' || q.expectation || ': observed ' || coalesce(q.observed_value, '?')
            || ' (threshold ' || coalesce(q.threshold, '-') || ')' ORDER BY q.check_name, q.expectation)
           FILTER (WHERE q.success IS NOT NULL) AS failed_expectations
FROM documents d
LEFT JOIN quality_results q
       ON q.doc_id = d.doc_id AND NOT q.success AND q.severity = 'ERROR'
WHERE d.status IN ('quarantined', 'failed')
GROUP BY ALL;

-- physical page <-> printed label, both ways (a label may repeat across parts of a document)
CREATE OR REPLACE VIEW page_label_map AS
SELECT doc_id, page_index, page_label, label_source,
       count(*) OVER (PARTITION BY doc_id, page_label) > 1 AS label_repeats
FROM pages;
