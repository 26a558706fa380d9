package com.supermarket.deployment;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The Terraform configuration, checked structurally (terraform fmt/validate need the binary and
 * the registry: scripts/check-terraform.sh runs them where they can be had).
 */
class TerraformFilesTest {

    private static final String EXACT_VERSION = "\"(= )?\\d+\\.\\d+\\.\\d+\"";

    @Test
    void everyVariableIsTypedAndDescribed() {
        List<TerraformFiles.Block> variables = TerraformFiles.blocks("variable");

        assertThat(variables).hasSizeGreaterThan(5).allSatisfy(variable -> {
            assertThat(variable.attribute("type")).as("type of variable " + variable.label()).isNotBlank();
            assertThat(variable.attribute("description")).as("description of variable " + variable.label())
                    .matches("\".{10,}\"");
        });
    }

    @Test
    void everyOutputIsDescribed() {
        assertThat(TerraformFiles.blocks("output")).isNotEmpty().allSatisfy(output -> assertThat(
                output.attribute("description")).as("description of output " + output.label()).matches("\".{10,}\""));
    }

    @Test
    void pinsTerraformAndEveryProviderVersion() {
        List<TerraformFiles.Block> terraform = TerraformFiles.blocks("terraform");
        assertThat(terraform).singleElement().satisfies(block -> {
            assertThat(block.attribute("required_version")).as("required_version").isNotBlank();
            List<String> providers = block.nested("required_providers");
            assertThat(providers).singleElement().satisfies(body -> {
                Matcher version = Pattern.compile("version\\s*=\\s*(\"[^\"]*\")").matcher(body);
                int count = 0;
                while (version.find()) {
                    assertThat(version.group(1)).as("provider version").matches(EXACT_VERSION);
                    count++;
                }
                assertThat(count).as("providers declared").isEqualTo(Pattern.compile("source\\s*=").matcher(body).results().count())
                        .isPositive();
            });
        });
    }

    @Test
    void pinsEveryRegistryModuleToAnExactVersion() {
        List<TerraformFiles.Block> modules = TerraformFiles.blocks("module");

        assertThat(modules).extracting(TerraformFiles.Block::label).contains("vpc", "eks");
        assertThat(modules).allSatisfy(module -> {
            assertThat(module.attribute("source")).as(module.label()).startsWith("\"terraform-aws-modules/");
            assertThat(module.attribute("version")).as("version of module " + module.label()).matches(EXACT_VERSION);
        });
    }

    @Test
    void makesTheNodeInstanceTypeAVariable() {
        TerraformFiles.Block eks = module("eks");

        assertThat(eks.body()).contains("instance_types = [var.node_instance_type]");
        assertThat(TerraformFiles.blocks("variable")).extracting(TerraformFiles.Block::label).contains("node_instance_type");
    }

    @Test
    void createsAnOnDemandDynamodbTableAndMysqlOnRdsWithoutAPasswordInCode() {
        TerraformFiles.Block table = resource("aws_dynamodb_table", "purchases");
        assertThat(table.attribute("billing_mode")).isEqualTo("\"PAY_PER_REQUEST\"");
        assertThat(table.attribute("hash_key")).isEqualTo("\"purchaseId\"");

        TerraformFiles.Block database = resource("aws_db_instance", "purchases");
        assertThat(database.attribute("engine")).isEqualTo("\"mysql\"");
        assertThat(database.attribute("manage_master_user_password")).isEqualTo("true");
        assertThat(database.attribute("password")).isNull();
        assertThat(database.attribute("publicly_accessible")).isEqualTo("false");
    }

    @Test
    void createsRdsOnlyOnTheMysqlPath() {
        TerraformFiles.Block store = variable("purchases_store");
        assertThat(store.body()).contains("validation", "contains([\"mysql\", \"dynamodb\"], var.purchases_store)");
        for (List<String> rds : List.of(List.of("aws_db_instance", "purchases"), List.of("aws_security_group", "rds"),
                List.of("aws_vpc_security_group_ingress_rule", "rds_from_nodes"))) {
            assertThat(resource(rds.get(0), rds.get(1)).attribute("count")).as(String.join(".", rds))
                    .isEqualTo("var.purchases_store == \"mysql\" ? 1 : 0");
        }
        assertThat(TerraformFiles.blocks("output")).filteredOn(o -> o.body().contains("aws_db_instance.purchases"))
                .isNotEmpty().allSatisfy(o -> assertThat(o.body()).as("output " + o.label() + " without RDS")
                        .doesNotContain("aws_db_instance.purchases.").contains("aws_db_instance.purchases[0]"));
        assertThat(DeploymentFiles.read("terraform/presets/micro.tfvars")).contains("purchases_store = \"mysql\"");
        assertThat(DeploymentFiles.read("terraform/presets/xlarge.tfvars")).contains("purchases_store = \"dynamodb\"");
    }

    @Test
    void pinsRdsToItsMajorAndNamesEachFinalSnapshotUniquelyUnlessSkipped() {
        assertThat(variable("rds_engine_version").attribute("default")).as("major only: RDS retires minors")
                .matches("\"\\d+\\.\\d+\"");
        TerraformFiles.Block database = resource("aws_db_instance", "purchases");
        assertThat(database.attribute("auto_minor_version_upgrade")).isEqualTo("true");
        assertThat(database.attribute("skip_final_snapshot")).isEqualTo("var.rds_skip_final_snapshot");
        assertThat(variable("rds_skip_final_snapshot").attribute("default")).isEqualTo("false");
        assertThat(database.attribute("final_snapshot_identifier")).as("a second create/destroy cycle must not collide")
                .contains("timestamp()");
        assertThat(database.nested("lifecycle")).singleElement().asString()
                .contains("ignore_changes = [final_snapshot_identifier]");
    }

    @Test
    void offersAnElasticacheIdempotencyStoreThatTheHelmValuesNameWhenOn() {
        assertThat(variable("idempotency_elasticache").attribute("default")).isEqualTo("false");
        TerraformFiles.Block cache = resource("aws_elasticache_replication_group", "idempotency");
        assertThat(cache.attribute("count")).isEqualTo("var.idempotency_elasticache ? 1 : 0");
        assertThat(cache.attribute("transit_encryption_enabled")).isEqualTo("true");
        assertThat(resource("aws_elasticache_parameter_group", "idempotency").nested("parameter")).singleElement()
                .asString().contains("\"maxmemory-policy\"", "\"volatile-ttl\"");
        String url = TerraformFiles.blocks("locals").stream().map(TerraformFiles.Block::body)
                .filter(b -> b.contains("idempotency_redis_url")).findFirst().orElseThrow();
        assertThat(url).as("TLS in transit needs rediss://").contains("\"rediss://${aws_elasticache_replication_group.idempotency[0]");
        assertThat(output("helm_values").body()).contains("redisUrl = local.idempotency_redis_url");
    }

    @Test
    void createsTheDynamodbTableWithTheSchemaPurchasesServiceCreatesLocally() {
        String repository = DeploymentFiles.read("purchases-service/src/main/java/com/supermarket/purchases/storage/"
                + "dynamodb/DynamoDbPurchaseRepository.java");
        Matcher index = Pattern.compile("STORE_DATE_INDEX = \"([^\"]+)\"").matcher(repository);
        Matcher projection = Pattern.compile("projectionType\\(ProjectionType\\.([A-Z_]+)\\)").matcher(repository);
        assertThat(index.find()).as("purchases-service names its index").isTrue();
        assertThat(projection.find()).as("purchases-service sets its index projection").isTrue();

        String table = resource("aws_dynamodb_table", "purchases").body().replaceAll("\\s+", " ");
        assertThat(table).contains("name = \"" + index.group(1) + "\"", "hash_key = \"storeId\"",
                "range_key = \"purchaseDate\"", "projection_type = \"" + projection.group(1) + "\"");
    }

    @Test
    void createsAnEcrRepositoryPerImageTheChartUses() {
        String repositories = variable("ecr_repositories").attribute("default");
        TerraformFiles.Block ecr = resource("aws_ecr_repository", "images");
        assertThat(ecr.attribute("name")).isEqualTo("\"supermarket/${each.key}\"");
        assertThat(ecr.attribute("image_tag_mutability")).isEqualTo("\"IMMUTABLE\"");
        assertThat(ecr.attribute("force_delete")).as("a repository with images must not block terraform destroy")
                .isEqualTo("true");

        List<HasMetadata> objects = HelmChart.objects(HelmChart.template(null, Map.of("imageRegistry", "registry.example")));
        // The services' images; the in-cluster Redis is Docker Hub's, like the broker's.
        for (Deployment deployment : HelmChartTest.ofKind(objects, Deployment.class).stream().filter(HelmChartTest::isService).toList()) {
            String image = deployment.getSpec().getTemplate().getSpec().getContainers().getFirst().getImage();
            String repository = image.substring("registry.example/supermarket/".length(), image.lastIndexOf(':'));
            assertThat(image).startsWith("registry.example/supermarket/");
            assertThat(repositories).as("an ECR repository for " + image).contains("\"" + repository + "\"");
        }
        assertThat(repositories).contains("\"load-client\"");
    }

    @Test
    void installsTheAddOnsTheChartReliesOn() {
        String eks = TerraformFiles.blocks("module").stream().filter(b -> b.label().equals("eks")).findFirst()
                .orElseThrow().body();
        assertThat(eks).as("the EBS CSI driver provisions the broker's volumes").contains("aws-ebs-csi-driver = {");
        assertThat(eks).as("the VPC CNI enforces the chart's NetworkPolicies").contains("enableNetworkPolicy = \"true\"");
        assertThat(TerraformFiles.blocks("module")).extracting(TerraformFiles.Block::label)
                .as("IRSA roles of the controllers the walkthrough installs")
                .contains("ebs_csi_irsa", "load_balancer_controller_irsa", "cluster_autoscaler_irsa");
    }

    @Test
    void trustsThePurchasesServiceRoleOnlyForTheChartsServiceAccount() {
        String trust = TerraformFiles.blocks("data").stream()
                .filter(b -> b.labels().equals(List.of("aws_iam_policy_document", "purchases_service_trust")))
                .findFirst().orElseThrow().body();
        assertThat(trust).contains("sts:AssumeRoleWithWebIdentity",
                "system:serviceaccount:${var.kubernetes_namespace}:${var.purchases_service_account_name}");

        String accountName = variable("purchases_service_account_name").attribute("default");
        List<HasMetadata> objects = HelmChart.objects(HelmChart.template(null, Map.of()));
        Deployment purchases = HelmChartTest.ofKind(objects, Deployment.class).stream()
                .filter(d -> d.getMetadata().getName().endsWith("-purchases-service")).findFirst().orElseThrow();
        assertThat(accountName).as("the chart's ServiceAccount for release " + HelmChart.RELEASE)
                .isEqualTo("\"" + purchases.getSpec().getTemplate().getSpec().getServiceAccountName() + "\"");
    }

    @Test
    void outputsWhatTheHelmValuesNeed() {
        assertThat(TerraformFiles.blocks("output")).extracting(TerraformFiles.Block::label).contains(
                "ecr_registry", "rds_jdbc_url", "rds_master_user_secret_arn", "dynamodb_table_name",
                "purchases_service_role_arn", "configure_kubectl", "helm_values");
        assertThat(output("helm_values").body()).contains("imageRegistry", "persistence", "roleArn");
    }

    @Test
    void validatesAgainstTheKubernetesVersionTheClusterRuns() {
        assertThat(variable("cluster_version").attribute("default"))
                .isEqualTo("\"" + HelmChart.KUBE_VERSION.substring(0, HelmChart.KUBE_VERSION.lastIndexOf('.')) + "\"");
    }

    private static TerraformFiles.Block module(String name) {
        return TerraformFiles.blocks("module").stream().filter(b -> b.label().equals(name)).findFirst().orElseThrow();
    }

    private static TerraformFiles.Block variable(String name) {
        return TerraformFiles.blocks("variable").stream().filter(b -> b.label().equals(name)).findFirst().orElseThrow();
    }

    private static TerraformFiles.Block output(String name) {
        return TerraformFiles.blocks("output").stream().filter(b -> b.label().equals(name)).findFirst().orElseThrow();
    }

    private static TerraformFiles.Block resource(String type, String name) {
        return TerraformFiles.blocks("resource").stream()
                .filter(b -> b.labels().equals(List.of(type, name))).findFirst()
                .orElseThrow(() -> new AssertionError("no resource " + type + "." + name));
    }
}
