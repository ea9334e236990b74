/**
 * The leader a scenario runs against, behind {@link io.pidpool.it.leader.LeaderUnderTest}: the real
 * pid-server leader {@link io.pidpool.it.leader.ServerLeaderUnderTest} (default) or {@link
 * io.pidpool.it.leader.FakeLeaderUnderTest} (the SDK's FakeLeader plus a minimal assignment policy).
 */
package io.pidpool.it.leader;
