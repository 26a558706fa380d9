package com.supermarket.deployment;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * scripts/lib/platform.sh's balance table (save_shard_counts, shard_balance), as
 * scripts/benchmark.sh prints it, run for real against a stand-in curl that answers the
 * management API's queue list: every sharded exchange's shard queues are listed, the store copy
 * groups' storeX.c&lt;c&gt; among them, in both topology modes' names.
 */
class ShardBalanceScriptTest {

    private static final String QUEUES = """
            [{"name":"sharding: purchaseX - sm1@localhost - 0","message_stats":{"publish":100}},
             {"name":"sharding: purchaseX - sm2@localhost - 1","message_stats":{"publish":120}},
             {"name":"sharding: storeX - sm1@localhost - 0","message_stats":{"publish":50}},
             {"name":"sharding: storeX - sm2@localhost - 1","message_stats":{"publish":60}},
             {"name":"sharding: storeX.c1 - sm1@localhost - 0","message_stats":{"publish":55}},
             {"name":"sharding: storeX.c1 - sm2@localhost - 1"},
             {"name":"storeX.c2.shard.0","message_stats":{"publish":30}},
             {"name":"storeX.c2.shard.1","message_stats":{"publish":45}},
             {"name":"store.queries.p0","message_stats":{"publish":9}},
             {"name":"purchases.parking","message_stats":{"publish":1}}]
            """;

    @Test
    void listsTheShardQueuesOfEveryStoreCopyGroup(@TempDir Path dir) throws Exception {
        Files.writeString(dir.resolve("queues.json"), QUEUES);
        Files.writeString(dir.resolve("before"), "10 sharding: storeX - sm1@localhost - 0\n");
        Path curl = dir.resolve("curl");
        Files.writeString(curl, "#!/bin/bash\ncat \"$QUEUES_JSON\"\n");
        Files.setPosixFilePermissions(curl, PosixFilePermissions.fromString("rwx------"));
        String script = "source \"$ROOT/scripts/lib/platform.sh\"; sleep() { :; }; "
                + "save_shard_counts \"$DIR/after\" && shard_balance \"$DIR/before\" \"$DIR/after\"";
        ProcessBuilder builder = new ProcessBuilder("bash", "-c", script).redirectErrorStream(true);
        builder.environment().put("PATH", dir + ":" + System.getenv("PATH"));
        builder.environment().put("ROOT", DeploymentFiles.root().toString());
        builder.environment().put("DIR", dir.toString());
        builder.environment().put("QUEUES_JSON", dir.resolve("queues.json").toString());
        Process bash = builder.start();
        assertThat(bash.waitFor(60, TimeUnit.SECONDS)).isTrue();
        String out = new String(bash.getInputStream().readAllBytes(), StandardCharsets.UTF_8);

        assertThat(bash.exitValue()).as(out).isZero();
        assertThat(out).isEqualTo("""
                purchaseX: 2 shard queues, messages per queue min 100, max 120, max/min 1.20; every queue received messages
                        100  sharding: purchaseX - sm1@localhost - 0
                        120  sharding: purchaseX - sm2@localhost - 1
                storeX: 2 shard queues, messages per queue min 40, max 60, max/min 1.50; every queue received messages
                         40  sharding: storeX - sm1@localhost - 0
                         60  sharding: storeX - sm2@localhost - 1
                storeX.c1: 2 shard queues, messages per queue min 0, max 55, max/min inf; NOTHING reached 1: sharding: storeX.c1 - sm2@localhost - 1
                         55  sharding: storeX.c1 - sm1@localhost - 0
                          0  sharding: storeX.c1 - sm2@localhost - 1
                storeX.c2: 2 shard queues, messages per queue min 30, max 45, max/min 1.50; every queue received messages
                         30  storeX.c2.shard.0
                         45  storeX.c2.shard.1
                """);
    }
}
