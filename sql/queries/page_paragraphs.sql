-- The paragraphs on one printed page (its label, e.g. 'ii' or '3', not the physical page number),
-- in reading order, with the section they belong to; a table is a row of kind 'table' (its text).
-- A paragraph that starts on the page before and runs onto this one is included
-- (continued = true). Change the file name and the label.
SET VARIABLE file_name = 'service_agreement.pdf';
SET VARIABLE page_label = '2';

SELECT p.reading_order, p.paragraph_id, p.kind, s.title AS section, p.page_label AS starts_on,
       p.page_index < pg.page_index AS continued, p.text
FROM documents d
JOIN pages pg ON pg.doc_id = d.doc_id AND pg.page_label = getvariable('page_label')
JOIN paragraphs p
  ON p.doc_id = d.doc_id
 AND pg.page_index BETWEEN p.page_index AND coalesce(p.last_page_index, p.page_index)
LEFT JOIN sections s ON s.doc_id = p.doc_id AND s.section_id = p.section_id
WHERE d.file_name = getvariable('file_name')
ORDER BY p.reading_order;
