"""Image attachments: checked by content, resized by us, stored in S3, priced per model.

`uploads` is what a request carries, `validation` turns each upload into an image we may send (or
a one-line refusal), `resize` is our own resize, `token_bounds` the published formula per model
(no entry: no images), `storage` the bucket, `question` the one call the answer use case makes,
and `history_images` what earlier images a model sees again.
"""
