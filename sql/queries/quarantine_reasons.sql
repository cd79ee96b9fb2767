-- Why documents were held back from the knowledge base: one row per reason, for every
-- quarantined or failed document (a file that could not be read has its parse error as reason).
-- Approve one by hand with `dagster-ocr approve DOC_ID --by NAME --reason WHY` (docs/quality-gate.md).
SELECT q.file_name, q.status,
       coalesce(reason, q.error) AS reason,
       q.approved_by, q.evaluated_at, q.doc_id
FROM quarantine q
LEFT JOIN LATERAL (SELECT unnest(q.failed_expectations) AS reason) r ON true
ORDER BY q.file_name, reason;
