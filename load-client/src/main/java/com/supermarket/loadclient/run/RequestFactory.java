package com.supermarket.loadclient.run;

import java.util.SplittableRandom;

import com.supermarket.loadclient.result.RunParameters;

/**
 * Builds the paths and bodies of the standard client's requests. Not thread-safe: each store
 * thread owns one (its random generator is unsynchronised on purpose).
 */
final class RequestFactory {

    private final RunParameters parameters;
    private final SplittableRandom random;
    private final StringBuilder body = new StringBuilder(64);

    RequestFactory(RunParameters parameters, SplittableRandom random) {
        this.parameters = parameters;
        this.random = random;
    }

    /** {@code /purchase/{storeID}/customer/{custID}/date/{date}}, custID in [store*1000, +customers). */
    String purchasePath(int store) {
        long customer = (long) store * 1000 + random.nextInt(parameters.customersPerStore());
        return "/purchase/" + store + "/customer/" + customer + "/date/" + parameters.date();
    }

    /** {@code {"items":[{"ItemID":"101","numberOfItems":1}, ...]}} with uniform item ids. */
    String purchaseBody() {
        body.setLength(0);
        body.append("{\"items\":[");
        for (int i = 0; i < parameters.itemsPerPurchase(); i++) {
            if (i > 0) {
                body.append(',');
            }
            body.append("{\"ItemID\":\"").append(randomItem()).append("\",\"numberOfItems\":1}");
        }
        return body.append("]}").toString();
    }

    String storeItemsPath(int store) {
        return "/items/store/" + store;
    }

    String topStoresPath() {
        return "/items/top10/" + randomItem();
    }

    private int randomItem() {
        return 1 + random.nextInt(parameters.maxItemId());
    }
}
