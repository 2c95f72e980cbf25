"""State on DynamoDB: table definitions, and one small module per kind of record."""
