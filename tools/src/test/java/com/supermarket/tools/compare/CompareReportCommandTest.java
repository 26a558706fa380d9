package com.supermarket.tools.compare;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

class CompareReportCommandTest {

    private static RunFigures run(double rps, double apiCpu) {
        return new RunFigures("256 stores, closed loop", rps, 10, 40, 1000, rps, 0.5, 100, 20, "", Map.of("purchase-api", apiCpu));
    }

    @Test
    void meansOverRoundsAndRatiosToTheFirstCommit() {
        String table = CompareReportCommand.table(List.of(
                new CompareReportCommand.Round("old", 1, List.of(run(1000, 0.4))),
                new CompareReportCommand.Round("new", 1, List.of(run(1800, 0.2))),
                new CompareReportCommand.Round("old", 2, List.of(run(1200, 0.6))),
                new CompareReportCommand.Round("new", 2, List.of(run(2200, 0.3)))));
        assertThat(table).contains("### 256 stores, closed loop");
        assertThat(table).containsPattern("\\| old \\(2\\) \\| 1,100 \\|");
        assertThat(table).containsPattern("\\| new \\(2\\) \\| 2,000 \\|");
        // req/s 2000/1100, the API's CPU 0.25/0.5.
        assertThat(table).containsPattern("\\| new / old \\| x1\\.82 \\|.*\\| x0\\.50 \\| x0\\.50 \\|");
        assertThat(table).contains("| new, 2, 256 stores, closed loop | 2,200 |");
    }

    @Test
    void aLabelMayHoldAVariableAndAFolderMayNot() {
        assertThat(CompareReportCommand.labelled("main+RABBITMQ_IMAGE=supermarket-local/rabbitmq:3.10.8=/runs/main_r1"))
                .isEqualTo(Map.entry("main+RABBITMQ_IMAGE=supermarket-local/rabbitmq:3.10.8", Path.of("/runs/main_r1")));
        assertThatThrownBy(() -> CompareReportCommand.labelled("/runs/main_r1")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> CompareReportCommand.labelled("main=")).isInstanceOf(IllegalArgumentException.class);
    }
}
