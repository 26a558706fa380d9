package com.supermarket.api.purchase;

import com.supermarket.contract.Topology;
import java.util.List;

/** Where a purchase is published so that both sharded exchanges receive it. */
enum PublishMode {

    /** One publish to the ingress fanout, which the broker copies to both sharded exchanges. */
    FANOUT(List.of(Topology.INGRESS_EXCHANGE)),

    /** One publish to each sharded exchange, each confirmed: twice the frames and confirms. */
    TWICE(Topology.SHARDED_EXCHANGES);

    private final List<String> exchanges;

    PublishMode(List<String> exchanges) {
        this.exchanges = exchanges;
    }

    List<String> exchanges() {
        return exchanges;
    }
}
