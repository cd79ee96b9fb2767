-- What happened to a file dropped in the inbox: every path it was seen under, the document its
-- bytes became, and that document's status and reason (duplicates share the original's document).
SET VARIABLE file_name = 'service_agreement.pdf';

SELECT path, first_seen, last_seen, duplicate_of, status, outcome, doc_id
FROM file_status
WHERE file_name = getvariable('file_name')
ORDER BY first_seen;
