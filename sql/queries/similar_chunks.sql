-- Knowledge-base chunks nearest in meaning to one chunk (cosine similarity of the stored
-- all-MiniLM-L6-v2 embeddings; array_cosine_similarity is core DuckDB, no extension needed).
-- Empty when embeddings were not computed (see docs/search.md, "Embeddings"). Change the search text:
-- the chunk whose text contains it is the reference.
SET VARIABLE needle = 'monthly service fee';

WITH ref AS (
    SELECT e.embedding, k.doc_id, k.chunk_id
    FROM kb_chunks k
    JOIN kb_embeddings e
      ON e.doc_id = k.doc_id AND e.chunk_id = k.chunk_id AND e.text_md5 = md5(k.text)
    WHERE k.text ILIKE '%' || getvariable('needle') || '%'
    ORDER BY k.doc_id, k.chunk_id
    LIMIT 1
)
SELECT k.citation, round(array_cosine_similarity(e.embedding, ref.embedding), 3) AS similarity,
       left(k.text, 100) AS excerpt
FROM ref, kb_embeddings e
JOIN kb_chunks k ON k.doc_id = e.doc_id AND k.chunk_id = e.chunk_id AND e.text_md5 = md5(k.text)
JOIN documents d ON d.doc_id = k.doc_id AND d.status = 'parsed'
WHERE NOT (k.doc_id = ref.doc_id AND k.chunk_id = ref.chunk_id)
ORDER BY similarity DESC, k.citation
LIMIT 5;
