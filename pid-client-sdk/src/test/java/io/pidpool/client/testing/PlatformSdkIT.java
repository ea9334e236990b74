package io.pidpool.client.testing;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link SdkIT} whose listener ("A") logs in and out of a {@link FakePlatform}: a double login
 * anywhere in the test fails it.
 */
public abstract class PlatformSdkIT extends SdkIT {
    protected final FakePlatform platform = new FakePlatform();

    @Override
    protected RecordingListener newListener() {
        return new RecordingListener("A", platform);
    }

    @Override
    protected void afterClose() {
        assertThat(platform.violations()).isEmpty();
    }
}
