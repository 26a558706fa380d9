# The purchases table for purchases-service's dynamodb store: on-demand, so it follows the load
# client's bursts without capacity planning. Keyed by purchaseId (a put is idempotent), with an
# index for a store's purchases by date. The schema is purchases-service's own (the one it creates
# itself with PURCHASES_DYNAMODB_CREATE_TABLE=true): the index projects keys only, so a write adds one small
# index entry instead of a second copy of the items.
resource "aws_dynamodb_table" "purchases" {
  name         = var.dynamodb_table_name
  billing_mode = "PAY_PER_REQUEST"
  hash_key     = "purchaseId"

  attribute {
    name = "purchaseId"
    type = "S"
  }

  attribute {
    name = "storeId"
    type = "N"
  }

  attribute {
    name = "purchaseDate"
    type = "S"
  }

  global_secondary_index {
    name            = "storeId-purchaseDate-index"
    hash_key        = "storeId"
    range_key       = "purchaseDate"
    projection_type = "KEYS_ONLY"
  }

  point_in_time_recovery {
    enabled = true
  }

  server_side_encryption {
    enabled = true
  }
}
