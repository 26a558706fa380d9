package com.supermarket.api.items;

import com.supermarket.contract.StoreQueryReply;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Function;

/**
 * Waiting for one reply of every partition asked, then going on with them. Failures reach the
 * caller as they were raised (a {@link StoreQueryFailedException}, never wrapped in a
 * {@link CompletionException}), which is what the controller answers from.
 * Stateless; thread-safe.
 */
final class PartitionReplies {

    private PartitionReplies() {
    }

    /**
     * {@code next}'s answer from every reply of {@code replies} (in their order) once all have
     * come; or, as soon as one fails, that failure: an answer is made of every partition or not
     * made. A {@code next} that throws (a bug) fails the answer with what it threw.
     */
    static CompletableFuture<StoreQueryReply> then(List<CompletableFuture<StoreQueryReply>> replies,
                                                   Function<List<StoreQueryReply>, CompletableFuture<StoreQueryReply>> next) {
        CompletableFuture<StoreQueryReply> answer = new CompletableFuture<>();
        for (CompletableFuture<StoreQueryReply> reply : replies) {
            reply.whenComplete((ignored, failure) -> {
                if (failure != null) {
                    answer.completeExceptionally(failure);
                }
            });
        }
        CompletableFuture.allOf(replies.toArray(CompletableFuture[]::new)).whenComplete((ignored, failure) -> {
            if (failure != null) {
                return; // already failed by the reply that failed
            }
            CompletableFuture<StoreQueryReply> following;
            try {
                following = next.apply(replies.stream().map(CompletableFuture::join).toList());
            } catch (RuntimeException e) {
                answer.completeExceptionally(e);
                return;
            }
            following.whenComplete((reply, error) -> {
                if (error != null) {
                    answer.completeExceptionally(error instanceof CompletionException wrapped && wrapped.getCause() != null
                            ? wrapped.getCause() : error);
                } else {
                    answer.complete(reply);
                }
            });
        });
        return answer;
    }
}
