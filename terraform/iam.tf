# IRSA: the role purchases-service's pods assume through their ServiceAccount's web identity
# token. Trusted only for that one ServiceAccount in that one namespace; allowed only what the
# service does with its table.
data "aws_iam_policy_document" "purchases_service_trust" {
  statement {
    actions = ["sts:AssumeRoleWithWebIdentity"]

    principals {
      type        = "Federated"
      identifiers = [module.eks.oidc_provider_arn]
    }

    condition {
      test     = "StringEquals"
      variable = "${module.eks.oidc_provider}:sub"
      values   = ["system:serviceaccount:${var.kubernetes_namespace}:${var.purchases_service_account_name}"]
    }

    condition {
      test     = "StringEquals"
      variable = "${module.eks.oidc_provider}:aud"
      values   = ["sts.amazonaws.com"]
    }
  }
}

# Exactly what DynamoDbPurchaseRepository does, on the table only: it writes purchases with
# BatchWriteItem (puts only; IAM cannot tell a put from a delete inside a batch), finds the ids
# already stored with BatchGetItem, reads one purchase with GetItem, checks readiness with
# DescribeTable, and counts with a Scan that returns no items (Select=COUNT, enforced below).
# No PutItem, Query, UpdateItem, DeleteItem or CreateTable, and no right on the
# storeId-purchaseDate index, which the service never reads (grant Query on
# "${aws_dynamodb_table.purchases.arn}/index/storeId-purchaseDate-index" when a reader needs it).
data "aws_iam_policy_document" "purchases_table" {
  statement {
    sid = "StoreAndReadPurchases"
    actions = [
      "dynamodb:BatchWriteItem",
      "dynamodb:BatchGetItem",
      "dynamodb:GetItem",
      "dynamodb:DescribeTable",
    ]
    resources = [aws_dynamodb_table.purchases.arn]
  }

  statement {
    sid       = "CountPurchases"
    actions   = ["dynamodb:Scan"]
    resources = [aws_dynamodb_table.purchases.arn]

    condition {
      test     = "StringEquals"
      variable = "dynamodb:Select"
      values   = ["COUNT"]
    }
  }
}

resource "aws_iam_role" "purchases_service" {
  name               = "${var.cluster_name}-purchases-service"
  description        = "Assumed by purchases-service pods (IRSA) to store purchases in DynamoDB"
  assume_role_policy = data.aws_iam_policy_document.purchases_service_trust.json
}

resource "aws_iam_role_policy" "purchases_table" {
  name   = "purchases-table"
  role   = aws_iam_role.purchases_service.id
  policy = data.aws_iam_policy_document.purchases_table.json
}
